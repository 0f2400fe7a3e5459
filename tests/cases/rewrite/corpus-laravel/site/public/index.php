laravel front controller
