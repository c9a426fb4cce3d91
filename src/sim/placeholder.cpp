// The simulator lands with its issue.
