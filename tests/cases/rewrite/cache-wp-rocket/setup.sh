# Pages as WP Rocket stores them: wp-content/cache/wp-rocket/<host>/<path>/index[-https].html
# and their gzip copies index[-https].html_gzip, made here so both servers see the same bytes and times.
set -e
page() {
	dir=wp-content/cache/wp-rocket/localhost$1
	mkdir -p "$dir"
	for ssl in '' -https; do
		printf '<!DOCTYPE html>\n<html><head><title>%s</title></head><body>cached %s%s</body></html>\n<!-- This website is like a Rocket -->\n' "$2" "$1" "$ssl" > "$dir/index$ssl.html"
		gzip -n -9 -c "$dir/index$ssl.html" > "$dir/index$ssl.html_gzip"
		touch -d '2024-01-02 03:04:05 UTC' "$dir/index$ssl.html" "$dir/index$ssl.html_gzip"
	done
}
page / Home
page /2024/01/hello/ Hello
page /feed/ Feed
touch -d '2024-01-02 03:04:05 UTC' style.css pic.gif notes.txt
