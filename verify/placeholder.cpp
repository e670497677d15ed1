// Temporary: removed once the room has sources.
