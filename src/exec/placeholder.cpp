// The executors land with their issues.
