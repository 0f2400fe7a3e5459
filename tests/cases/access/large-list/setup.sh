python3 - <<'PY'
import random
random.seed(7)
nets=[]
for i in range(19998):
    a=random.randrange(1,223)
    if a in (10,127): a=11
    nets.append("%d.%d.%d.0/24" % (a, random.randrange(256), random.randrange(256)))
nets += ["127.0.0.2", "2001:db8::/32"]
random.shuffle(nets)
with open("d/.htaccess","w") as f:
    f.write("Order allow,deny\nAllow from all\n")
    for i in range(0, len(nets), 4):
        f.write("Deny from " + " ".join(nets[i:i+4]) + "\n")
with open("r/.htaccess","w") as f:
    f.write("<RequireAll>\nRequire all granted\n")
    for i in range(0, len(nets), 8):
        f.write("Require not ip " + " ".join(nets[i:i+8]) + "\n")
    f.write("</RequireAll>\n")
PY
