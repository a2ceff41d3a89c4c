# bbrplot: the pictures, drawn by gnuplot from the templates in plots/*.gp (issue 5)
TOOLS += bbrplot
bbrplot_SRCS := plots/bbrplot.c plots/plotdata.c

UNIT_TESTS += test_bbrplot
test_bbrplot_SRCS := plots/plotdata.c

# the installed templates' directory (find_template), from PREFIX
$(OBJ)/plots/bbrplot.o: CFLAGS += -DTK_DATADIR='"$(DATADIR)"'
$(OBJ)/plots/bbrplot.o: $(BUILD)/datadir

# its readers (trace, udpdwell records, upfbench and sweep CSV, bbrpcap's CSV)
# on arbitrary input
FUZZ_TARGETS += fuzz_plotdata
fuzz_plotdata_SRCS := plots/plotdata.c lib/trace.c lib/jsonl.c lib/jlines.c lib/record.c lib/cli.c lib/log.c lib/dwellrec.c
