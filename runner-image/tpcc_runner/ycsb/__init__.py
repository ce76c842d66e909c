"""YCSB's CoreWorkload as a second workload of the runner (`tpcc ycsb load|run|verify`): its
properties and presets A-F (tpcc_contract.ycsb.properties), its generators ported from YCSB 0.17's Java
(generators.py), the operation stream (workload.py), one key-value store per database
(mongodb.py, voltdb.py, foundationdb.py behind store.py), the client threads (executor.py),
YCSB's text output (measurements.py; the JSON results: tpcc_contract.ycsb) and the write ledger (ledger.py)."""
