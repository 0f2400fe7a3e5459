# Pages as W3 Total Cache (disk: enhanced) stores them:
# wp-content/cache/page_enhanced/<host>/<path>/_index_slash[_ssl].html and the gzip
# copy .html_gzip, made here so both servers see the same bytes and times.
set -e
page() {
	dir=wp-content/cache/page_enhanced/localhost$1
	mkdir -p "$dir"
	printf '<!DOCTYPE html>\n<html><head><title>%s</title></head><body>cached %s %s</body></html>\n<!-- Performance optimized by W3 Total Cache -->\n' "$2" "$1" "$3" > "$dir/$3$4"
	touch -d '2024-01-02 03:04:05 UTC' "$dir/$3$4"
	if [ -z "$5" ]; then
		gzip -n -9 -c "$dir/$3$4" > "$dir/$3$4_gzip"
		touch -d '2024-01-02 03:04:06 UTC' "$dir/$3$4_gzip"
	fi
}
page / Home _index_slash .html
page /2024/01/hello/ Hello _index_slash .html
page /2024/01/hello/ Hello _index_slash_ssl .html plain-only
page /feed/ Feed _index_slash .xml plain-only
