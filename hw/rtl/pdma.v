`default_nettype none
`include "chip_defs.vh"
// pdma: the paged DMA: PLOAD, PSTORE and PCOPY (hw/ISA.md, "Paged instructions"), rows of a
// KV pool in external memory read and written through a block table, one level of indirection.
//
// It reads and writes through the memory interface unit (mem_if.v), which keeps the ideal
// memory's schedule; the unit counts no latency of its own. Cycle 0 is the cycle after the
// one-cycle command (E = the entries read, n the words moved; paged_geometry.v gives both;
// the cycles in brackets are the ideal memory's, L = EXT_LAT):
//
//   table   cycle 0 commands a read stream of the header (PCOPY: the source page), cycle 1 one of
//           the E entries (PCOPY: the destination page). The first E + 1 words to arrive are
//           these: the header into first_reg, each entry into the entry buffer (a rowmem of
//           PT_ENTRIES), each one checked as it arrives. With the last [cycle E + L + 2] comes
//           the verdict: with a bad one (BAD_PAGE) the unit raises done and fault there, having
//           written nothing.
//   load    (PLOAD; PCOPY's first half) from the cycle after the verdict, steps one word a cycle
//           and commands one read stream per row, in the cycle of the row's first word; each
//           word is written to sram[b + i] in the cycle it arrives.
//   store   (PSTORE; PCOPY's second half, from the cycle after its last load word) reads
//           sram[b + i] in one cycle and pushes the word to its pool address in the next, one
//           write stream per row, commanded with the row's first push, a fence with the last
//           push; done when the fence completes. A PSTORE's first read is in the verdict's
//           cycle, its first push after it.
//
// In a cycle with `stall` high nothing changes, and the unit presents the SRAM read address of
// the cycle before again, so that the SRAM's registered read port still holds the word a store
// is about to push.
//
// A row's pool address is c + (page * P + slot) * row_words + column, the page from the entry
// buffer (PCOPY: the source or the destination page), the slot and the table page from the
// row's position first + row + i: a shift and a mask. The command fields are held stable by the
// controller while the instruction runs.
module pdma #(
    parameter SRAM_AW = 12                  // SRAM address width
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               stall,          // the memory interface unit freezes this cycle

    // command
    input  wire               cmd_pload,      // one cycle: start a PLOAD
    input  wire               cmd_pstore,     // one cycle: start a PSTORE
    input  wire               cmd_pcopy,      // one cycle: start a PCOPY
    input  wire [15:0]        cmd_table,      // a: the block table (PCOPY: the page pair)
    input  wire [15:0]        cmd_sram,       // b: the scratchpad rows
    input  wire [15:0]        cmd_pool,       // c: page 0 of the pool
    input  wire [7:0]         cmd_row_words,
    input  wire [15:0]        cmd_len,        // rows
    input  wire [7:0]         cmd_page_shift,
    input  wire [15:0]        cmd_row,        // the first table row (PCOPY: slot)
    input  wire [15:0]        cmd_pages,      // the pool's pages
    input  wire               cmd_copy,       // the held instruction is PCOPY (for the geometry)
    output wire               done,           // high in the last cycle of the instruction
    output wire               fault,          // with done: stopped on BAD_PAGE
    output wire               table_word,     // a block-table word arrived this cycle
    output wire               data_word,      // a word reached its destination this cycle

    // the memory interface unit
    output wire [15:0]        mem_addr,       // the stream's address and length (read or write)
    output wire [15:0]        mem_len,
    output wire               rd_cmd,
    input  wire               rd_valid,
    input  wire [31:0]        rd_data,
    output wire               wr_cmd,
    output wire               wr_push,
    output wire [31:0]        wr_data,
    output wire               fence,
    input  wire               fence_done,

    // SRAM
    output wire [SRAM_AW-1:0] sram_raddr,
    input  wire [31:0]        sram_rdata,
    output wire               sram_we,
    output wire [SRAM_AW-1:0] sram_waddr,
    output wire [31:0]        sram_wdata
);

localparam ENTRY_AW = $clog2(`PT_ENTRIES);    // entry buffer address width

// ---------------------------------------------------------------------------------------------
// geometry of the held instruction

wire [15:0] page_rows, first_entry;
wire [23:0] words;
wire [31:0] entries, table_span;
wire [47:0] pool_words;
wire        size_bad;

paged_geometry u_geometry (
    .copy        (cmd_copy),
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

wire [3:0]  sh       = cmd_page_shift[3:0];
wire [31:0] mask     = {16'd0, page_rows} - 32'd1;
wire [31:0] pages_32 = {16'd0, cmd_pages};
wire [31:0] n_32     = {8'd0, words};

// ---------------------------------------------------------------------------------------------
// state

reg        active_reg;
reg        load_reg;        // PLOAD
reg        copy_reg;        // PCOPY
reg        storing_reg;     // PSTORE, or PCOPY's second half
reg [1:0]  t_reg;           // table streams commanded: 0, 1, 2 (then the table is asked)
reg        tdone_reg;       // every table word arrived, none bad: the rows may move
reg        fenced_reg;      // store: every word pushed, waiting for the fence
reg [31:0] trsp_reg;        // table words arrived
reg [15:0] first_reg;       // the header (PCOPY: the source page)
reg [15:0] dst_reg;         // PCOPY: the destination page
reg        bad_reg;         // a table word arrived bad
reg [31:0] drow_reg;        // data side: the row of the next word read (load) or written (store)
reg [7:0]  dcol_reg;        // .. its column
reg [31:0] dcount_reg;      // .. words read (load) or written (store) so far
reg [31:0] lrsp_reg;        // load words arrived
reg [31:0] sread_reg;       // store: SRAM words read
reg        pend_reg;        // store: the SRAM word read last cycle is on sram_rdata

// ---------------------------------------------------------------------------------------------
// table words

wire        table_issue = active_reg && (t_reg != 2'd2);    // cycle 0: header; 1: entries
wire [15:0] table_addr  = (t_reg == 2'd0) ? cmd_table : (cmd_table + first_entry + 16'd1);
wire [15:0] table_len   = (t_reg == 2'd0) ? 16'd1 : entries[15:0];
wire        table_rsp   = active_reg && rd_valid && (trsp_reg <= entries);
wire        table_last  = table_rsp && (trsp_reg == entries);
wire [31:0] entry_index = trsp_reg - 32'd1;    // the entry arriving (trsp_reg >= 1)

// the entries the rows use: table pages (first + row) >> sh .. (first + row + len - 1) >> sh
wire [31:0] pos_first = {16'd0, first_reg} + {16'd0, cmd_row};
wire [31:0] pos_last  = pos_first + {16'd0, cmd_len} - 32'd1;
wire [31:0] used_lo   = (pos_first >> sh) - {16'd0, first_entry};
wire [31:0] used_hi   = (pos_last >> sh) - {16'd0, first_entry};
wire        used      = (entry_index >= used_lo) && (entry_index <= used_hi);

wire page_bad   = (rd_data >= pages_32);
wire header_bad = !copy_reg && (rd_data > mask);
wire rsp_bad    = table_rsp && ((trsp_reg == 32'd0) ? (copy_reg ? page_bad : header_bad)
                                                     : ((copy_reg || used) && page_bad));

assign fault = table_last && (bad_reg || rsp_bad);

wire [ENTRY_AW-1:0] entry_waddr = entry_index[ENTRY_AW-1:0];
wire                entry_we    = table_rsp && !copy_reg && (trsp_reg != 32'd0);

// ---------------------------------------------------------------------------------------------
// data side: the pool address of row drow_reg, column dcol_reg

wire [31:0]         pos        = pos_first + drow_reg;
wire [31:0]         rel_entry  = (pos >> sh) - {16'd0, first_entry};
wire [ENTRY_AW-1:0] entry_raddr = rel_entry[ENTRY_AW-1:0];
wire [15:0]         entry_page;

rowmem #(
    .WIDTH (16),
    .DEPTH (`PT_ENTRIES)
) u_entries (
    .clk     (clk),
    .wr_en   (entry_we),
    .wr_addr (entry_waddr),
    .wr_data (rd_data[15:0]),
    .rd_addr (entry_raddr),
    .rd_data (entry_page)
);

wire [15:0] page      = copy_reg ? (storing_reg ? dst_reg : first_reg) : entry_page;
wire [31:0] slot      = copy_reg ? ({16'd0, cmd_row} + drow_reg) : (pos & mask);
wire [31:0] phys_row  = ({16'd0, page} << sh) | slot;
wire [39:0] row_start = {8'd0, phys_row} * {32'd0, cmd_row_words};
wire [15:0] pool_addr = cmd_pool + row_start[15:0] + {8'd0, dcol_reg};
wire        row_end   = (dcol_reg == cmd_row_words - 8'd1);

wire ld_issue = active_reg && !storing_reg && (load_reg || copy_reg) && tdone_reg &&
                (dcount_reg != n_32);
wire ld_rsp   = active_reg && rd_valid && (trsp_reg > entries);
wire ld_last  = ld_rsp && (lrsp_reg == n_32 - 32'd1);

// a PSTORE reads its first word in the verdict's cycle (table_last)
wire st_read  = active_reg && storing_reg && (copy_reg || tdone_reg || table_last) &&
                (sread_reg != n_32);
wire st_write = active_reg && storing_reg && pend_reg;
wire st_last  = st_write && (dcount_reg == n_32 - 32'd1);
wire row_first = (dcol_reg == 8'd0);

wire data_step = ld_issue || st_write;    // the data side moves to the next word

assign done = fault || (ld_last && load_reg) || (fenced_reg && fence_done);

// ---------------------------------------------------------------------------------------------
// ports

assign mem_addr   = table_issue ? table_addr : pool_addr;
assign mem_len    = table_issue ? table_len : {8'd0, cmd_row_words};
assign rd_cmd     = table_issue || (ld_issue && row_first);
assign wr_cmd     = st_write && row_first;
assign wr_push    = st_write;
assign wr_data    = sram_rdata;
assign fence      = st_last;

wire [31:0] sram_wr = {16'd0, cmd_sram} + lrsp_reg;
wire [31:0] sram_rd = {16'd0, cmd_sram} + sread_reg;

assign sram_we    = ld_rsp;
assign sram_waddr = sram_wr[SRAM_AW-1:0];
assign sram_wdata = rd_data;
reg [SRAM_AW-1:0] raddr_reg;    // the SRAM read address presented in the cycle before

assign sram_raddr = stall ? raddr_reg : sram_rd[SRAM_AW-1:0];

always @(posedge clk) begin
    raddr_reg <= sram_raddr;
end

assign table_word = table_rsp;
assign data_word  = (ld_rsp && load_reg) || st_write;

// ---------------------------------------------------------------------------------------------
// registers

always @(posedge clk) begin
    if (rst) begin
        active_reg    <= 1'b0;
        load_reg      <= 1'b0;
        copy_reg      <= 1'b0;
        storing_reg   <= 1'b0;
        t_reg         <= 2'd0;
        tdone_reg     <= 1'b0;
        fenced_reg    <= 1'b0;
        trsp_reg      <= 32'd0;
        first_reg     <= 16'd0;
        dst_reg       <= 16'd0;
        bad_reg       <= 1'b0;
        drow_reg      <= 32'd0;
        dcol_reg      <= 8'd0;
        dcount_reg    <= 32'd0;
        lrsp_reg      <= 32'd0;
        sread_reg     <= 32'd0;
        pend_reg      <= 1'b0;
    end else if (!stall && !active_reg) begin
        active_reg    <= cmd_pload || cmd_pstore || cmd_pcopy;
        load_reg      <= cmd_pload;
        copy_reg      <= cmd_pcopy;
        storing_reg   <= cmd_pstore;
        t_reg         <= 2'd0;
        tdone_reg     <= 1'b0;
        fenced_reg    <= 1'b0;
        trsp_reg      <= 32'd0;
        bad_reg       <= 1'b0;
        drow_reg      <= 32'd0;
        dcol_reg      <= 8'd0;
        dcount_reg    <= 32'd0;
        lrsp_reg      <= 32'd0;
        sread_reg     <= 32'd0;
        pend_reg      <= 1'b0;
    end else if (!stall) begin
        if (table_issue) begin
            t_reg <= t_reg + 2'd1;
        end
        if (table_last) begin
            tdone_reg <= 1'b1;    // with a fault the instruction ends in this cycle
        end
        if (st_last) begin
            fenced_reg <= 1'b1;
        end
        if (table_rsp) begin
            trsp_reg <= trsp_reg + 32'd1;
            bad_reg  <= bad_reg || rsp_bad;
            if (trsp_reg == 32'd0) begin
                first_reg <= rd_data[15:0];
            end else if (copy_reg) begin
                dst_reg <= rd_data[15:0];
            end
        end
        if (data_step) begin
            dcount_reg <= dcount_reg + 32'd1;
            dcol_reg   <= row_end ? 8'd0 : dcol_reg + 8'd1;
            drow_reg   <= row_end ? drow_reg + 32'd1 : drow_reg;
        end
        if (ld_rsp) begin
            lrsp_reg <= lrsp_reg + 32'd1;
        end
        if (st_read) begin
            sread_reg <= sread_reg + 32'd1;
        end
        pend_reg <= st_read;
        if (ld_last && copy_reg) begin    // PCOPY: every source word is in the scratchpad
            storing_reg <= 1'b1;
            drow_reg    <= 32'd0;
            dcol_reg    <= 8'd0;
            dcount_reg  <= 32'd0;
        end
        if (done) begin
            active_reg <= 1'b0;
        end
    end
end

// the controller checks the sizes and the table's and pool's extents before the command
wire unused_pdma = &{1'b0, size_bad, table_span, pool_words, row_start[39:16],
                     rel_entry[31:ENTRY_AW], sram_wr[31:SRAM_AW], sram_rd[31:SRAM_AW]};

endmodule

`default_nettype wire
