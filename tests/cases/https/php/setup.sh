# The same script under std/, where SSLOptions +StdEnvVars applies.
mkdir -p std && cp env.php std/env.php
