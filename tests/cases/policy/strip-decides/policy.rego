package ctxgate

scope := "app"

element_attributes contains "privacy"

# The author, wherever the element is not where the user is.
strip contains "author" if {
	not input.element.focused
}

# Every attribute of the provider's `x-` namespace, named from the input.
strip contains name if {
	some name in input.element.attribute_names
	startswith(name, "x-")
}

# A private row is sent without its notes.
strip contains "notes" if input.element.attributes.privacy == "private"

keep contains "focus-path" if input.element.focused
