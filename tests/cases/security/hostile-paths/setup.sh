# Secrets outside the document root, which no path may reach.
mkdir -p ../outside
echo "HTACCEL-SECRET-7f3a-outside-secret" > ../outside/secret.txt
printf '# %s-outside-htaccess\n' "HTACCEL-SECRET-7f3a" > ../outside/.htaccess
# Basic authentication with the password file at the root of the site
# (denied by the server's <Files ".ht*">); the path is the staged tree's.
htpasswd -cbm .htpasswd user "HTACCEL-SECRET-7f3a-password" 2>/dev/null
cat > auth/.htaccess <<END
# HTACCEL-SECRET-7f3a-auth-htaccess
AuthType Basic
AuthName "members"
AuthUserFile $(pwd)/.htpasswd
Require valid-user
END
