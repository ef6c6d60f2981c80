package ninja

// GenTree is genTree for the external benchmark of `stalecheck check` (check_bench_test.go).
var GenTree = genTree
