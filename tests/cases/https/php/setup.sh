# The same script under std/ (SSLOptions +StdEnvVars) and certs/ (also
# +ExportCertData).
mkdir -p std certs && cp env.php std/env.php && cp env.php certs/env.php
