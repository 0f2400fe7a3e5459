ocm
