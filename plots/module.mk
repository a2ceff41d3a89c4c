# bbrplot: the pictures, drawn by gnuplot from the templates in plots/*.gp
TOOLS += bbrplot

# each plot's data from its input (plotdata.h): one file per input, and the
# CSV reading and data-file writing they share
PLOTDATA_SRCS := plots/data_file.c plots/data_csv.c plots/data_dip_trace.c plots/data_dip_tput.c plots/data_dip_gaps.c \
		 plots/data_dwell.c plots/data_upf.c plots/data_sweep.c

bbrplot_SRCS := plots/bbrplot.c plots/options.c plots/template.c plots/gnuplot.c plots/capture.c plots/draw.c \
		$(PLOTDATA_SRCS)

UNIT_TESTS += test_bbrplot
test_bbrplot_SRCS := $(PLOTDATA_SRCS)

# the installed templates' directory (find_template, and --help's words on
# it), from PREFIX
$(OBJ)/plots/template.o $(OBJ)/plots/options.o: CFLAGS += -DTK_DATADIR='"$(DATADIR)"'
$(OBJ)/plots/template.o $(OBJ)/plots/options.o: $(BUILD)/datadir

# its readers (trace, udpdwell records, upfbench and sweep CSV, bbrpcap's CSV)
# on arbitrary input
FUZZ_TARGETS += fuzz_plotdata
fuzz_plotdata_SRCS := $(PLOTDATA_SRCS) lib/trace.c lib/jsonl.c lib/jlines.c lib/record.c lib/rectable.c lib/cli.c lib/log.c lib/dwellrec.c \
                      lib/demand.c
