wp front controller
