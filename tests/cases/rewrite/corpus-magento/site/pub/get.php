get
