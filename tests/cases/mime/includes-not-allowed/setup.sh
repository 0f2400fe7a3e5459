touch -d '2021-03-04 05:06:07 UTC' page.shtml plain.html handler/a.html handler/b.page sub/c.txt
