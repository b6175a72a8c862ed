package ctxgate

priority := to_number("x") if {
	input.element.role == "Image"
	# The probes' Images sit three levels deep: loading does not see this
	# fail, a real tree's shallower Image does (at request time).
	count(input.inside) < 3
} else := 1

keep contains "focus-path" if input.element.focused
