# One directory per line of exprs, each with an If/Else pair.
n=0
while IFS= read -r expr; do
    n=$((n + 1))
    mkdir -p "$n"
    printf 'ok\n' > "$n/f.txt"
    printf '<If "%s">\n    ForceType text/x-true\n</If>\n<Else>\n    ForceType text/x-false\n</Else>\n' "$expr" > "$n/.htaccess"
done < "$CASE_DIR/exprs"
