package ctxgate

denny contains "images" if input.element.role == "Image"

is_text if input.element.role == "Text"

mask contains "text" if is_text
