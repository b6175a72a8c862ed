package ctxgate

# Runs away only for a List or Text less than three levels deep, which no
# probe element is: the policy loads, then a request runs into the limit.
priority := count([x |
	some i in numbers.range(1, 3000)
	some j in numbers.range(1, 3000)
	x := i * j
]) if {
	input.element.role in {"List", "Text"}
	count(input.inside) < 3
}
