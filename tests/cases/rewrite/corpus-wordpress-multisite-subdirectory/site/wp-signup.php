signup
