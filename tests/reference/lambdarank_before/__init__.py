"""The LambdaRank kernels as they stood before their pair terms were merged (commit
0e06090, verbatim but for these imports): the old side of
``tests/kernels/test_lambdarank_pair_term.py``, removed once that test has held."""
