# Files the application sends itself (Flask's send_file), outside both sites.
mkdir -p ../shared
i=0
while [ $i -lt 200 ]; do printf 'line %04d of the document sent by Flask\n' $i; i=$((i + 1)); done > ../shared/doc.txt
touch -d '2020-01-01 00:00:00 UTC' ../shared/doc.txt
