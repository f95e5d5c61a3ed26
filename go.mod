module github.com/fabricbench/fabricbench

go 1.24
