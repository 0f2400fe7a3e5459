mkdir -p ../auth
f=../auth/htpasswd
htpasswd -cbB -C 4 $f ubcrypt pw 2>/dev/null
htpasswd -bm $f uapr1 pw 2>/dev/null
htpasswd -bs $f usha pw 2>/dev/null
htpasswd -bd $f udes pw 2>/dev/null
htpasswd -bp $f uplain pw 2>/dev/null
cat >> $f <<'X'
# a comment line
   umd5:$1$abcdefgh$IQtUouv7y7Q9dRWkQEPCc.   
usha256:$5$abcdefgh$ijtOJ//yvc/9bq1g0llFn9dB688BwBDRD90DlKKSKE1
usha512:$6$abcdefgh$KQeXafAQAaOoKTevphVU215RvJdgzyfASRasIOuh12hO8u0r1bGW92ZnTmC9IjsiQ8VPiTXBiZF49dFL1U4wX/
u2a:$2a$04$eLbT/.qXKT4A868UqMDW2.GBikszGrag8ByK.bJdwweDw/rLQJ2u2
u2b:$2b$04$eLbT/.qXKT4A868UqMDW2.GBikszGrag8ByK.bJdwweDw/rLQJ2u2
uextra:$apr1$C5vU6pMr$MdpSRMUcsQTmESi27ALHY1:Full Name:x
uempty:
ubroken:$apr1$
X
htpasswd -nb dup first 2>/dev/null | head -1 >> $f
htpasswd -nb dup pw 2>/dev/null | head -1 >> $f
chmod 755 ../auth; chmod 644 $f
