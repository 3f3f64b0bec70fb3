"""Datasets: one loader module per dataset, all returning the shared record types."""

from .records import ClozeQuery, Entity, MCItem
from .registry import DATASETS, dataset_dir, dataset_file

__all__ = ["ClozeQuery", "Entity", "MCItem", "DATASETS", "dataset_dir", "dataset_file"]
