package ctxgate

# `x` is read but never declared in `element_attributes`: the value is
# always undefined, so this mask never masks. Refused at load.
mask contains "private" if input.element.attributes.x == "private"
