symfony front controller
