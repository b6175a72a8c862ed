package ctxgate

# A name computed from the input must still be a string.
strip contains count(input.element.attribute_names) if input.action.name == "app"
