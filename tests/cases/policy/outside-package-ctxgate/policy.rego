package other
keep := {"a"}
