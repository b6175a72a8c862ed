package ctxgate

element_attributes := {"privacy"}

deny contains "chat-window" if {
	input.element.role == "Window"
	input.element.subrole == "chat"
}

mask contains "private-row" if {
	input.element.role == "Row"
	input.element.attributes.privacy == "private"
}
