"""YCSB's side of the contract: its properties (properties.py), what a run measured
(measurements.py) and the merge of the runner pods' documents (results.py)."""
