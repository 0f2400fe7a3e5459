# Generate /a/b/…/z with a .htaccess at every level.
dir=.
for l in a b c d e f g h i j k l m n o p q r s t u v w x y z; do
    dir="$dir/$l"
    mkdir -p "$dir"
    {
        echo "AddType text/x-level-$l .$l"
        echo "ErrorDocument 404 \"missing at level $l\""
        echo "# a comment line to make the file longer than one line"
    } > "$dir/.htaccess"
    printf 'file at %s\n' "$l" > "$dir/f.$l"
    printf 'index at %s\n' "$l" > "$dir/index.html"
done
printf 'Options +Indexes\nDirectoryIndex none.html\n' >> a/b/c/d/e/f/g/h/i/j/k/l/m/.htaccess
printf 'Options -Indexes\n' >> a/b/c/d/e/f/g/h/i/j/k/l/m/n/.htaccess
