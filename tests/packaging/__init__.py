"""What ships: the C SDK as its users get it."""
