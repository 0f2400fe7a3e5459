oc
