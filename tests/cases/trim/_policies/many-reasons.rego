# A test policy for the report's `reasons`: a salary cell matches three
# mask rules, a payroll window is denied (and its rows masked too), the
# focus path is kept, window scope.
package ctxgate

# METADATA
# title: Window scope
# description: The focused window.
scope := "window"

# METADATA
# title: Mask salary cells
# description: A cell whose subrole is `salary`.
mask contains "salary" if {
	input.element.subrole == "salary"
}

# METADATA
# title: Mask money cells
# description: Every cell of a money column.
mask contains "money-column" if {
	input.element.role == "Cell"
	input.element.subrole in {"salary", "bonus"}
}

# METADATA
# title: Mask private cells
# description: Cells a person would call private.
mask contains "private-cell" if {
	input.element.role == "Cell"
	input.element.subrole in {"salary", "address"}
}

# METADATA
# title: Deny payroll windows
# description: Nothing of a payroll window is sent.
deny contains "payroll-window" if {
	input.element.role == "Window"
	input.element.subrole == "payroll"
}

# METADATA
# title: Prune hidden
# description: What is not on screen.
prune contains "hidden" if {
	not input.element.visible
}

# METADATA
# title: Keep the focus path
# description: Focused elements.
keep contains "focus-path" if {
	input.element.focused
}
