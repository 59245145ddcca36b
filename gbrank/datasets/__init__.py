"""Data for ranking and imbalanced classification: loaders of LETOR/SVMlight files and
tables (CSV, Parquet), synthetic generators, and click simulation for learning from
click logs."""

from gbrank.datasets._clicks import (
    ClickLog,
    MultiClickSessions,
    PositionIdentifiability,
    estimate_propensity,
    multi_click_sessions,
    position_identifiability,
    simulate_clicks,
)
from gbrank.datasets._letor import (
    LETOR_PARTS,
    letor_fold,
    letor_rotation,
    load_letor,
    load_letor_files,
    load_letor_folds,
    number_alike,
)
from gbrank.datasets._load import load_data
from gbrank.datasets._synthetic import (
    load_breast_cancer_imbalanced,
    make_demand_levels,
    make_imbalanced,
    make_ranking,
)
from gbrank.datasets._tables import (
    TABLE_SUFFIXES,
    NonNumericColumnsError,
    load_table,
    table_columns,
)

__all__ = ["LETOR_PARTS", "TABLE_SUFFIXES", "ClickLog", "MultiClickSessions",
           "NonNumericColumnsError", "PositionIdentifiability", "estimate_propensity",
           "position_identifiability", "letor_fold", "letor_rotation",
           "load_breast_cancer_imbalanced", "load_data", "load_letor", "load_letor_files",
           "load_letor_folds", "load_table", "number_alike", "multi_click_sessions",
           "make_demand_levels",
           "make_imbalanced", "make_ranking", "simulate_clicks", "table_columns"]
