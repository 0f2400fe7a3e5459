mkdir -p ../aliased/dir
printf 'from the alias target\n' > ../aliased/a.txt
printf 'in dir\n' > ../aliased/dir/b.txt
