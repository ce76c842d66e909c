"""The contract between the operator and the runner, the one package both install: what a runner
pod's results document holds and how several pods' documents merge (results, deliveries,
server_stats, server_agreement; ycsb.measurements, ycsb.results), the constants both sides judge by
(tpcc, histograms), YCSB's properties (ycsb.properties) and the runner command lines the operator
writes into its Jobs (commands). Pure Python; hdrhistogram is its one dependency."""
