package ctxgate

# Writes an attribute's value into a reason: refused when evaluated, as
# reasons are written into notices and the report.

element_attributes := {"AXValue"}

mask contains input.element.attributes.AXValue if input.element.attributes.AXValue
