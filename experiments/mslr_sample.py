"""A second LETOR set for quality claims, built from what the package registries hold.

The reference data beside the checkout has one LETOR set (MQ2008). A second one reachable
from this machine's registries: the sample of Microsoft's MSLR-WEB set (LETOR's web-search
successor: 136 features, grades 0-4) that ``rankeval`` 0.8.2 ships as test data in its
source distribution on PyPI (``rankeval/test/data/msn1.fold1.{train,test}.5k.txt``: the
first 5,000 rows of MSLR-WEB fold 1's training and test files, 43 queries each). This
module downloads that archive from PyPI's simple index, checks its SHA-256 and both
files', and writes a LETOR 4.0
folder of five parts ``S1.txt`` ... ``S5.txt`` the tuner's ``--data DIR --fold k`` reads:

- each file's last query is left out: the 5,000-row cut ends inside it (45 and 26 rows
  where the file's other queries have a median of 95 and 120);
- the remaining 84 queries, training file first, in file order, go to the parts
  round-robin (query i to part ``i % 5 + 1``): 17, 17, 17, 17 and 16 queries, each part
  mixing both files; qids are renumbered 1-84 (the two files' ids do not overlap);
- rows keep their label and all 136 features; nothing else changes.

So a fold's test part has 16-17 queries: a small, noisy set, as the issue's second set is
("smaller and noisier" than MQ2008), not MSLR-WEB itself (whose queries number 10,000).

    python experiments/mslr_sample.py          # writes data/MSLR-sample/ (git-ignored)

The folder is built once; :func:`mslr_sample_dir` returns it (building it when absent).
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
import tarfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "data" / "MSLR-sample"
INDEX = "https://pypi.org/simple/rankeval/"
ARCHIVE = "rankeval-0.8.2.tar.gz"
ARCHIVE_SHA256 = "c7d71602ab7fe0a0281976c1f0e883cb16431f72e4e946e5fd83790449bb21a9"
FILES = {  # member of the source archive -> SHA-256 of its bytes
    "rankeval-0.8.2/rankeval/test/data/msn1.fold1.train.5k.txt":
        "6d1721de961a35fbaef7085dc5b41e2940f0ddb04bab5f7a8566cf7db4158fa6",
    "rankeval-0.8.2/rankeval/test/data/msn1.fold1.test.5k.txt":
        "13d3c638edd23e482c38f4316c2680c938c2eaedbe096970ab30a48e364463d3",
}
PARTS = 5


def _queries(text: str) -> list[list[str]]:
    """The file's queries in order, each a list of ``label feature...`` strings (the
    ``qid:`` field taken out), the last (cut) query dropped."""
    queries: list[list[str]] = []
    last = None
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        if not fields[1].startswith("qid:"):
            raise ValueError(f"not a LETOR row: {line[:60]!r}")
        if fields[1] != last:
            queries.append([])
            last = fields[1]
        queries[-1].append(" ".join([fields[0], *fields[2:]]))
    return queries[:-1]


def build(folder: Path = FOLDER) -> Path:
    """Download the sample, check it, write the five parts into ``folder``."""
    print(f"downloading {ARCHIVE} from {INDEX} ...", file=sys.stderr, flush=True)
    with urllib.request.urlopen(INDEX, timeout=60) as page:
        links = re.findall(r'href="([^"#]*/' + re.escape(ARCHIVE) + ')', page.read().decode())
    if not links:
        raise RuntimeError(f"{ARCHIVE} is not listed on {INDEX}")
    with urllib.request.urlopen(links[0], timeout=120) as response:
        archive = response.read()
    if hashlib.sha256(archive).hexdigest() != ARCHIVE_SHA256:
        raise RuntimeError(f"{links[0]} is not the archive this sample was built from "
                           "(SHA-256 differs)")
    queries: list[list[str]] = []
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member, digest in FILES.items():
            data = tar.extractfile(member).read()
            if hashlib.sha256(data).hexdigest() != digest:
                raise RuntimeError(f"{member}: SHA-256 differs")
            queries += _queries(data.decode("ascii"))
    folder.mkdir(parents=True, exist_ok=True)
    parts: list[list[str]] = [[] for _ in range(PARTS)]
    for i, rows in enumerate(queries):
        parts[i % PARTS] += [f"{r.split(' ', 1)[0]} qid:{i + 1} {r.split(' ', 1)[1]}"
                             for r in rows]
    for p, rows in enumerate(parts, start=1):
        (folder / f"S{p}.txt").write_text("\n".join(rows) + "\n")
    (folder / "README.md").write_text(
        f"Built by experiments/mslr_sample.py from {ARCHIVE} (PyPI): "
        f"{len(queries)} MSLR-WEB queries, parts S1-S5 round-robin. Not committed.\n")
    return folder


def mslr_sample_dir() -> Path:
    """The folder of five parts, built on first use."""
    if not all((FOLDER / f"S{p}.txt").exists() for p in range(1, PARTS + 1)):
        build()
    return FOLDER


if __name__ == "__main__":
    folder = build()
    for p in range(1, PARTS + 1):
        lines = (folder / f"S{p}.txt").read_text().splitlines()
        print(f"{folder / f'S{p}.txt'}: {len(lines)} rows, "
              f"{len({ln.split()[1] for ln in lines})} queries")
