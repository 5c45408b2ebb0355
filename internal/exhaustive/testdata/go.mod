module example.com/closed

go 1.26
