package ctxgate

element_attributes := {"AXDOMClassList"}

deny contains "ads" if input.element.attributes.AXDOMClassList == "ad"
