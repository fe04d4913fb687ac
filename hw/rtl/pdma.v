`default_nettype none
`include "chip_defs.vh"
// pdma: the paged DMA: PLOAD, PSTORE and PCOPY (hw/ISA.md, "Paged instructions"), rows of a
// KV pool in external memory read and written through a block table, one level of indirection.
//
// Cycle 0 is the cycle after the one-cycle command (L = EXT_LAT, E = the entries read, n the
// words moved; paged_geometry.v gives both):
//
//   table   cycle 0 reads the header (PCOPY: the source page), cycles 1 .. E the entries
//           (PCOPY: the destination page). The first E + 1 words to arrive are these: the header
//           into first_reg, each entry into the entry buffer (a rowmem of PT_ENTRIES), each one
//           checked as it arrives. The last arrives in cycle E + L: with a bad one (BAD_PAGE)
//           the unit raises done and fault there, having written nothing.
//   load    (PLOAD; PCOPY's first half) one read a cycle from cycle E + L + 1; each word is
//           written to sram[b + i] in the cycle it arrives.
//   store   (PSTORE; PCOPY's second half, from the cycle after its last load word) reads
//           sram[b + i] in one cycle and writes the word to its pool address in the next; a
//           PSTORE's first read is in cycle E + L, its first write after the verdict.
//
// A row's pool address is c + (page * P + slot) * row_words + column, the page from the entry
// buffer (PCOPY: the source or the destination page), the slot and the table page from the
// row's position first + row + i: a shift and a mask. The command fields are held stable by the
// controller while the instruction runs.
module pdma #(
    parameter SRAM_AW = 12,                 // SRAM address width
    parameter EXT_LAT = `EXT_LAT_DEFAULT    // external read latency in cycles
) (
    input  wire               clk,
    input  wire               rst,

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

    // external memory
    output wire               mem_req,
    output wire               mem_we,
    output wire [15:0]        mem_addr,
    output wire [31:0]        mem_wdata,
    input  wire               mem_rvalid,
    input  wire [31:0]        mem_rdata,

    // SRAM
    output wire [SRAM_AW-1:0] sram_raddr,
    input  wire [31:0]        sram_rdata,
    output wire               sram_we,
    output wire [SRAM_AW-1:0] sram_waddr,
    output wire [31:0]        sram_wdata
);

localparam ENTRY_AW = $clog2(`PT_ENTRIES);    // entry buffer address width
localparam [31:0] LAT = EXT_LAT;

initial begin
    `CHECK_RANGE("EXT_LAT", EXT_LAT, `EXT_LAT_LO, `EXT_LAT_HI)
end

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

// the last cycle of the table phase, when the last table word arrives (hw/ISA.md, "Cycle
// costs"): the load stream starts after it, a PSTORE's first SRAM read in it
wire [31:0] verdict = entries + LAT;

// ---------------------------------------------------------------------------------------------
// state

reg        active_reg;
reg        load_reg;        // PLOAD
reg        copy_reg;        // PCOPY
reg        storing_reg;     // PSTORE, or PCOPY's second half
reg [31:0] t_reg;           // cycles since the command
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

wire        table_issue = active_reg && (t_reg <= entries);
wire [15:0] table_addr  = (t_reg == 32'd0) ? cmd_table :
                          (cmd_table + first_entry + t_reg[15:0]);
wire        table_rsp   = active_reg && mem_rvalid && (trsp_reg <= entries);
wire        table_last  = table_rsp && (trsp_reg == entries);
wire [31:0] entry_index = trsp_reg - 32'd1;    // the entry arriving (trsp_reg >= 1)

// the entries the rows use: table pages (first + row) >> sh .. (first + row + len - 1) >> sh
wire [31:0] pos_first = {16'd0, first_reg} + {16'd0, cmd_row};
wire [31:0] pos_last  = pos_first + {16'd0, cmd_len} - 32'd1;
wire [31:0] used_lo   = (pos_first >> sh) - {16'd0, first_entry};
wire [31:0] used_hi   = (pos_last >> sh) - {16'd0, first_entry};
wire        used      = (entry_index >= used_lo) && (entry_index <= used_hi);

wire page_bad   = (mem_rdata >= pages_32);
wire header_bad = !copy_reg && (mem_rdata > mask);
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
    .wr_data (mem_rdata[15:0]),
    .rd_addr (entry_raddr),
    .rd_data (entry_page)
);

wire [15:0] page      = copy_reg ? (storing_reg ? dst_reg : first_reg) : entry_page;
wire [31:0] slot      = copy_reg ? ({16'd0, cmd_row} + drow_reg) : (pos & mask);
wire [31:0] phys_row  = ({16'd0, page} << sh) | slot;
wire [39:0] row_start = {8'd0, phys_row} * {32'd0, cmd_row_words};
wire [15:0] pool_addr = cmd_pool + row_start[15:0] + {8'd0, dcol_reg};
wire        row_end   = (dcol_reg == cmd_row_words - 8'd1);

wire ld_issue = active_reg && !storing_reg && (load_reg || copy_reg) && (t_reg > verdict) &&
                (dcount_reg != n_32);
wire ld_rsp   = active_reg && mem_rvalid && (trsp_reg > entries);
wire ld_last  = ld_rsp && (lrsp_reg == n_32 - 32'd1);

wire st_read  = active_reg && storing_reg && (copy_reg || (t_reg >= verdict)) &&
                (sread_reg != n_32);
wire st_write = active_reg && storing_reg && pend_reg;
wire st_last  = st_write && (dcount_reg == n_32 - 32'd1);

wire data_step = ld_issue || st_write;    // the data side moves to the next word

assign done = fault || (ld_last && load_reg) || st_last;

// ---------------------------------------------------------------------------------------------
// ports

assign mem_req   = table_issue || ld_issue || st_write;
assign mem_we    = st_write;
assign mem_addr  = table_issue ? table_addr : pool_addr;
assign mem_wdata = sram_rdata;

wire [31:0] sram_wr = {16'd0, cmd_sram} + lrsp_reg;
wire [31:0] sram_rd = {16'd0, cmd_sram} + sread_reg;

assign sram_we    = ld_rsp;
assign sram_waddr = sram_wr[SRAM_AW-1:0];
assign sram_wdata = mem_rdata;
assign sram_raddr = sram_rd[SRAM_AW-1:0];

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
        t_reg         <= 32'd0;
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
    end else if (!active_reg) begin
        active_reg    <= cmd_pload || cmd_pstore || cmd_pcopy;
        load_reg      <= cmd_pload;
        copy_reg      <= cmd_pcopy;
        storing_reg   <= cmd_pstore;
        t_reg         <= 32'd0;
        trsp_reg      <= 32'd0;
        bad_reg       <= 1'b0;
        drow_reg      <= 32'd0;
        dcol_reg      <= 8'd0;
        dcount_reg    <= 32'd0;
        lrsp_reg      <= 32'd0;
        sread_reg     <= 32'd0;
        pend_reg      <= 1'b0;
    end else begin
        t_reg <= t_reg + 32'd1;
        if (table_rsp) begin
            trsp_reg <= trsp_reg + 32'd1;
            bad_reg  <= bad_reg || rsp_bad;
            if (trsp_reg == 32'd0) begin
                first_reg <= mem_rdata[15:0];
            end else if (copy_reg) begin
                dst_reg <= mem_rdata[15:0];
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
