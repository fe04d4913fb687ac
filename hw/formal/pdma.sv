`default_nettype none
`include "chip_defs.vh"
// Formal properties of pdma (hw/rtl/pdma.v; hw/ISA.md, "Paged instructions"): the block table
// is read first (the header at a, then the E entries j_lo .. j_hi; PCOPY: its page pair) and
// nothing is written or read from the pool before every table word has arrived; every pool
// stream it then issues lies inside the pool ext[c .. c + pages * P * row_words); a header
// >= P, a used entry >= pages or a PCOPY page >= pages raises BAD_PAGE (fault with done) with
// the last table word, and then nothing is read or written. The geometry comes from the
// controller's paged_geometry, as on the chip; the controller's checks (sizes, extents), its
// command contract and the memory interface unit's (words only when owed) are assumptions.
module pdma_fv #(
    parameter SRAM_AW = 12
) (
    input wire        clk,
    input wire        rst,
    input wire        stall,
    input wire        cmd_pload,
    input wire        cmd_pstore,
    input wire        cmd_pcopy,
    input wire [15:0] cmd_table,
    input wire [15:0] cmd_sram,
    input wire [15:0] cmd_pool,
    input wire [7:0]  cmd_row_words,
    input wire [15:0] cmd_len,
    input wire [7:0]  cmd_page_shift,
    input wire [15:0] cmd_row,
    input wire [15:0] cmd_pages,
    input wire [15:0] cmd_page_rows,    // the geometry: free here, paged_geometry's by the
    input wire [23:0] cmd_words,        // controller's contract (pdma_props assumes it)
    input wire [15:0] cmd_first_entry,
    input wire [31:0] cmd_entries,
    input wire        rd_valid,
    input wire [31:0] rd_data,
    input wire        fence_done,
    input wire [31:0] sram_rdata
);

pdma #(
    .SRAM_AW (SRAM_AW)
) dut (
    .clk             (clk),
    .rst             (rst),
    .stall           (stall),
    .cmd_pload       (cmd_pload),
    .cmd_pstore      (cmd_pstore),
    .cmd_pcopy       (cmd_pcopy),
    .cmd_table       (cmd_table),
    .cmd_sram        (cmd_sram),
    .cmd_pool        (cmd_pool),
    .cmd_row_words   (cmd_row_words),
    .cmd_len         (cmd_len),
    .cmd_page_shift  (cmd_page_shift),
    .cmd_row         (cmd_row),
    .cmd_pages       (cmd_pages),
    .cmd_page_rows   (cmd_page_rows),
    .cmd_words       (cmd_words),
    .cmd_first_entry (cmd_first_entry),
    .cmd_entries     (cmd_entries),
    .done            (),
    .fault           (),
    .table_word      (),
    .data_word       (),
    .mem_addr        (),
    .mem_len         (),
    .rd_cmd          (),
    .rd_valid        (rd_valid),
    .rd_data         (rd_data),
    .wr_cmd          (),
    .wr_push         (),
    .wr_data         (),
    .fence           (),
    .fence_done      (fence_done),
    .sram_raddr      (),
    .sram_rdata      (sram_rdata),
    .sram_we         (),
    .sram_waddr      (),
    .sram_wdata      ()
);

endmodule

// the properties, on every port of the unit; the monitor's state goes out to the invariants
// (pdma_invariants.vh, inside pdma)
module pdma_props #(
    parameter SRAM_AW   = 12,
    parameter LEN_MAX   = 2,       // narrowed: rows per instruction
    parameter RW_MAX    = 1,       // narrowed: words per row
    parameter SH_MAX    = 1,       // narrowed: page_shift
    parameter PAGES_MAX = 4        // narrowed: the pool's pages
) (
    input wire               clk,
    input wire               rst,
    input wire               stall,
    input wire               cmd_pload,
    input wire               cmd_pstore,
    input wire               cmd_pcopy,
    input wire [15:0]        cmd_table,
    input wire [15:0]        cmd_sram,
    input wire [15:0]        cmd_pool,
    input wire [7:0]         cmd_row_words,
    input wire [15:0]        cmd_len,
    input wire [7:0]         cmd_page_shift,
    input wire [15:0]        cmd_row,
    input wire [15:0]        cmd_pages,
    input wire [15:0]        cmd_page_rows,
    input wire [23:0]        cmd_words,
    input wire [15:0]        cmd_first_entry,
    input wire [31:0]        cmd_entries,
    input wire               done,
    input wire               fault,
    input wire               table_word,
    input wire               data_word,
    input wire [15:0]        mem_addr,
    input wire [15:0]        mem_len,
    input wire               rd_cmd,
    input wire               rd_valid,
    input wire [31:0]        rd_data,
    input wire               wr_cmd,
    input wire               wr_push,
    input wire [31:0]        wr_data,
    input wire               fence,
    input wire               fence_done,
    input wire [SRAM_AW-1:0] sram_raddr,
    input wire [31:0]        sram_rdata,
    input wire               sram_we,
    input wire [SRAM_AW-1:0] sram_waddr,
    input wire [31:0]        sram_wdata,
    output reg               f_past_valid = 1'b0,
    output reg               f_busy = 1'b0,      // a command accepted, its done not yet come
    output reg               f_copy = 1'b0,      // .. it is a PCOPY
    output reg  [1:0]        f_cmds = 2'd0,      // its read streams, up to the two table ones
    output reg  [16:0]       f_owed = 17'd0,     // read words commanded and not yet delivered
    output reg  [31:0]       f_twords = 32'd0,   // table words arrived
    output reg  [31:0]       f_first = 32'd0,    // the header (PCOPY: the source page)
    output reg               f_bad = 1'b0,       // a table word arrived bad (ISA's BAD_PAGE)
    output reg               f_faulted = 1'b0,   // the last instruction stopped on BAD_PAGE
    output reg               f_fence = 1'b0      // a fence was asked for and has not completed
);

wire        copy_field = cmd_pcopy || (f_busy && f_copy);
wire [15:0] page_rows, first_entry;
wire [23:0] words;
wire [31:0] entries, table_span;
wire [47:0] pool_words;
wire        size_bad;

// the controller's instance: the instruction's geometry, and its size check
paged_geometry u_geometry (
    .copy        (copy_field),
    .row_words   (cmd_row_words),
    .len         (cmd_len),
    .page_shift  (cmd_page_shift),
    .row         (cmd_row),
    .pages       (cmd_pages),
    .page_rows   (page_rows),
    .words       (words),
    .first_entry (first_entry),
    .entries     (entries),
    .table_span  (table_span),
    .pool_words  (pool_words),
    .size_bad    (size_bad)
);

// ---------------------------------------------------------------------------------------------
// the instruction as the controller and the memory interface unit see it

wire        starting = cmd_pload || cmd_pstore || cmd_pcopy;
wire        accepted = starting && !stall;

// the ISA's rule for each table word: word 0 the header (PCOPY: src), word 1 + i entry
// j_lo + i (PCOPY: dst); an entry is used when a row moved lies in its table page
wire [3:0]  sh         = cmd_page_shift[3:0];
wire [31:0] p_32       = 32'd1 << sh;
wire [31:0] pages_32   = {16'd0, cmd_pages};
wire [31:0] pos_lo     = f_first + {16'd0, cmd_row};
wire [31:0] pos_hi     = pos_lo + {16'd0, cmd_len} - 32'd1;
wire [31:0] entry_j    = {16'd0, first_entry} + f_twords - 32'd1;
wire        entry_used = (entry_j >= (pos_lo >> sh)) && (entry_j <= (pos_hi >> sh));
wire        word_bad   = (f_twords == 32'd0) ? (f_copy ? (rd_data >= pages_32) : (rd_data >= p_32))
                                             : ((f_copy || entry_used) && rd_data >= pages_32);
wire        in_table   = f_busy && (f_twords != entries + 32'd1);   // table words still due
wire        table_in   = in_table && rd_valid;                      // one arrives
wire        verdict    = table_in && (f_twords == entries);         // the last one
wire [31:0] pool_end   = {16'd0, cmd_pool} + pool_words[31:0];
wire [31:0] stream_end = {16'd0, mem_addr} + {16'd0, mem_len};

always @(posedge clk) begin
    f_past_valid <= 1'b1;
    if (rst) begin
        f_busy <= 1'b0;
        f_owed <= 17'd0;
        f_faulted <= 1'b0;
        f_fence <= 1'b0;
    end else if (!stall) begin
        if (accepted) begin
            f_busy <= 1'b1;
            f_copy <= cmd_pcopy;
            f_cmds <= 2'd0;
            f_twords <= 32'd0;
            f_bad <= 1'b0;
            f_faulted <= 1'b0;
        end else begin
            if (done) f_busy <= 1'b0;
            if (done) f_faulted <= fault;
            if (rd_cmd && f_cmds != 2'd2) f_cmds <= f_cmds + 2'd1;
            if (table_in) begin
                f_twords <= f_twords + 32'd1;
                f_bad <= f_bad || word_bad;
                if (f_twords == 32'd0) f_first <= rd_data;
            end
        end
        f_owed <= f_owed + (rd_cmd ? {1'b0, mem_len} : 17'd0) - {16'd0, rd_valid};
        if (fence) f_fence <= 1'b1;
        else if (fence_done) f_fence <= 1'b0;
    end
end

// ---------------------------------------------------------------------------------------------
// the contracts

reg [15:0] f_a, f_b, f_c, f_len, f_row, f_pages;
reg [7:0]  f_rw, f_sh;
always @(posedge clk) begin
    if (accepted) begin
        {f_a, f_b, f_c, f_len, f_row, f_pages} <= {cmd_table, cmd_sram, cmd_pool, cmd_len,
                                                   cmd_row, cmd_pages};
        {f_rw, f_sh} <= {cmd_row_words, cmd_page_shift};
    end
end

always @(*) begin
    if (!f_past_valid) assume (rst);
    // controller: one command, only while no instruction runs (it commands in CHECK)
    ONE_COMMAND: assume ($onehot0({cmd_pload, cmd_pstore, cmd_pcopy}));
    COMMAND_WHEN_IDLE: assume (!starting || !f_busy);
    // controller: the command passed its checks (hw/ISA.md, "Errors"): the sizes
    // (paged_geometry's size_bad), the table and the pool inside external memory (<= 2^16)
    if (starting || f_busy) begin
        CHECKED_SIZES: assume (!size_bad);
        CHECKED_EXTENTS: assume ({16'd0, cmd_table} + table_span <= 32'h10000
                                 && {16'd0, cmd_pool} + pool_words <= 48'h10000);
        // narrowed, so that whole instructions fit the bounded depth (see plan.py)
        NARROW: assume (cmd_len <= LEN_MAX && cmd_row_words <= RW_MAX
                        && cmd_page_shift <= SH_MAX && cmd_pages <= PAGES_MAX);
    end
    // controller: the geometry is its paged_geometry's, of the held instruction
    GEOMETRY: assume (cmd_page_rows == page_rows && cmd_words == words
                      && cmd_first_entry == first_entry && cmd_entries == entries);
    // memory interface unit: a word only when a commanded one is owed, never when stalled
    WORD_OWED: assume (!rd_valid || (f_owed != 17'd0 && !stall));
    // memory interface unit: fence_done only for a fence asked earlier, not stalled
    FENCE_OWED: assume (!fence_done || (f_fence && !stall));
end

always @(posedge clk) begin
    if (f_past_valid && !rst && !$past(rst)) begin
        // controller: a command raised in a stalled cycle is raised again (CHECK is held)
        if ($past(stall && starting)) begin
            COMMAND_HELD: assume ({cmd_pload, cmd_pstore, cmd_pcopy}
                                  == $past({cmd_pload, cmd_pstore, cmd_pcopy})
                                  && cmd_table == $past(cmd_table) && cmd_sram == $past(cmd_sram)
                                  && cmd_pool == $past(cmd_pool) && cmd_len == $past(cmd_len)
                                  && cmd_row == $past(cmd_row) && cmd_pages == $past(cmd_pages)
                                  && cmd_row_words == $past(cmd_row_words)
                                  && cmd_page_shift == $past(cmd_page_shift));
        end
    end
    if (f_past_valid && f_busy) begin
        // controller: the instruction register, and so the fields, is held during EXEC
        FIELDS_HELD: assume ({cmd_table, cmd_sram, cmd_pool, cmd_len, cmd_row, cmd_pages,
                              cmd_row_words, cmd_page_shift}
                             == {f_a, f_b, f_c, f_len, f_row, f_pages, f_rw, f_sh});
    end
end

// ---------------------------------------------------------------------------------------------
// the properties

wire writes = sram_we || wr_cmd || wr_push || fence;
always @(*) begin
    if (f_past_valid && !rst) begin
        // outside an instruction nothing is read or written, and no done: after a done (and so
        // after a BAD_PAGE stop) nothing until the next command
        QUIET_WHEN_IDLE: assert (f_busy || !(rd_cmd || writes || done || table_word));
        // the table first: the header at a (PCOPY: the pair's src), 1 word ..
        if (rd_cmd && !stall && f_busy && f_cmds == 2'd0) begin
            HEADER_READ: assert (mem_addr == cmd_table && mem_len == 16'd1);
        end
        // .. then the E entries from a + 1 + j_lo (PCOPY: dst, 1 word)
        if (rd_cmd && !stall && f_busy && f_cmds == 2'd1) begin
            ENTRIES_READ: assert (mem_addr == cmd_table + 16'd1 + first_entry
                                  && {16'd0, mem_len} == entries);
        end
        // nothing written, and no pool word read, before every table word has arrived
        if (in_table && !verdict) begin
            TABLE_FIRST: assert (!writes && !(rd_cmd && !stall && f_cmds == 2'd2));
        end
        // every pool stream lies inside the pool the instruction names
        if ((rd_cmd || wr_cmd) && !stall && f_busy && f_cmds == 2'd2) begin
            IN_POOL: assert (mem_addr >= cmd_pool && stream_end <= pool_end && mem_len != 0);
        end
        // the verdict: BAD_PAGE (fault, with done) exactly when a checked table word was bad
        if (verdict || fault) begin
            BAD_PAGE: assert (verdict && fault == (f_bad || word_bad) && (!fault || done));
        end
        // a table word is reported exactly when one arrives (ev_pt_words counts these)
        TABLE_WORD: assert (table_word == table_in);
        // after BAD_PAGE nothing of the instruction is read or written
        if (f_faulted || (fault && !stall)) begin
            NOTHING_AFTER_FAULT: assert (!writes && !(rd_cmd && f_cmds == 2'd2));
        end
    end
end

// the preconditions are reachable
always @(posedge clk) begin
    if (f_past_valid && !rst) begin
        C_TABLE: cover (rd_cmd && f_busy && f_cmds == 2'd1 && entries > 32'd1 && !f_copy);
        C_POOL_READ: cover (rd_cmd && !stall && f_cmds == 2'd2 && f_first != 0);
        C_POOL_WRITE: cover (wr_cmd && !stall && f_copy);
        C_PSTORE: cover (wr_cmd && !stall && !f_copy && cmd_page_shift != 0);
        C_BAD_ENTRY: cover (fault && !stall && f_twords != 32'd0 && !f_copy && f_first < p_32);
        C_BAD_HEADER: cover (fault && !stall && f_first >= p_32 && !f_copy);
        C_GOOD_UNUSED_BAD: cover (verdict && !fault && !stall && rd_data >= pages_32
                                  && !f_copy);
        C_AFTER_FAULT: cover (f_faulted && $past(f_faulted) && accepted);
        C_DONE: cover (done && !fault && !stall && f_copy);
    end
end

endmodule

`default_nettype wire
