j
