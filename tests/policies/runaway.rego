package ctxgate

priority := count([x |
	some i in numbers.range(1, 3000)
	some j in numbers.range(1, 3000)
	x := i * j
])
