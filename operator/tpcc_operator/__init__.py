"""tpcc-operator: runs TPC-C BenchmarkRuns on Kubernetes."""
