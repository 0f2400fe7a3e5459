front
