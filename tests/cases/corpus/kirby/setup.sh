src="$CASE_DIR/../../../../../shared/corpus/kirby/.htaccess"
if [ -f "$src" ]; then cp "$src" .htaccess; fi
