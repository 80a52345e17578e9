module github.com/respire-go/respire

go 1.26.8
