`default_nettype none
`include "chip_defs.vh"
// mem_if: the memory interface unit, the one module that speaks AXI4 (hw/ISA.md, "The AXI4
// manager port" and "The memory interface unit").
//
// Unit side (the controller's fetch, the DMA, the paged DMA), in *advancing* cycles: a cycle with
// `stall` high is frozen, and none of the unit-side inputs below takes effect in it (the units
// hold their state, so they present the same inputs again in the next cycle).
//   read stream   rd_cmd with rd_addr (word address) and rd_len (1 .. 65535 words): word i is
//                 delivered (rd_valid, rd_data) in its due cycle D + i, where
//                 D = max(c + EXT_LAT + 2, the previous stream's last due cycle + 1), c the
//                 command's cycle: the ideal memory's schedule. A unit commands a stream no
//                 earlier than EXT_LAT + 2 cycles before the previous one's last word is due
//                 (the units stream back to back, never further ahead): so at most
//                 EXT_LAT + 3 streams have words to come, which READS_MAX bursts cover, and a
//                 full command queue always drains
//   write stream  wr_cmd with wr_addr and wr_len, then wr_push with wr_data once per word (the
//                 first push may be in the command's cycle)
//   fence         fence, in the cycle of the stream's last push: fence_done is high in the cycle
//                 3 later, when every write so far has its B response
//   bus_err       sticky from `clear` (a run's start): an R beat or a B came back SLVERR/DECERR
//
// The ideal schedule is a model inside the unit: a delay line of EXT_LAT + 1 stages carries
// each read stream's length to a counter of words due, a 2-stage one carries fences. `stall`
// is high in a cycle when that schedule needs what the memory has not given yet: a word is due
// and the read buffer is empty, a fence is due and a write is unacknowledged, or a command or
// a push finds its queue full. So the units see the ideal memory in advancing cycles whatever
// the memory does (hw/ISA.md, "Exact by construction").
//
// AXI side, every cycle (frozen or not): streams are cut into INCR bursts of at most 256 beats
// that never cross a 4 KB boundary (1024 words), one AR and one AW a cycle from registers held
// until ready; up to READS_MAX reads outstanding (counted from the AR's issue to its last R
// beat); R beats go into the read buffer (rready while it has room); W beats leave from the
// write buffer in order, wlast on each burst's last; bready is always 1.
module mem_if #(
    parameter EXT_LAT   = `EXT_LAT_DEFAULT,    // the ideal memory's read latency (hw/ISA.md)
    parameter READS_MAX = `AXI_READS_MAX,      // read bursts outstanding, at most
    parameter RBUF      = 8,                   // read buffer words
    parameter WBUF      = 8                    // write buffer words
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        clear,        // a run starts: bus_err falls

    // unit side
    output wire        stall,
    output wire        bus_err,
    input  wire        rd_cmd,
    input  wire [15:0] rd_addr,
    input  wire [15:0] rd_len,
    output wire        rd_valid,
    output wire [31:0] rd_data,
    input  wire        wr_cmd,
    input  wire [15:0] wr_addr,
    input  wire [15:0] wr_len,
    input  wire        wr_push,
    input  wire [31:0] wr_data,
    input  wire        fence,
    output wire        fence_done,

    // AXI4 manager
    output wire [0:0]  m_axi_arid,
    output wire [31:0] m_axi_araddr,
    output wire [7:0]  m_axi_arlen,
    output wire [2:0]  m_axi_arsize,
    output wire [1:0]  m_axi_arburst,
    output wire        m_axi_arvalid,
    input  wire        m_axi_arready,
    input  wire [0:0]  m_axi_rid,
    input  wire [31:0] m_axi_rdata,
    input  wire [1:0]  m_axi_rresp,
    input  wire        m_axi_rlast,
    input  wire        m_axi_rvalid,
    output wire        m_axi_rready,
    output wire [0:0]  m_axi_awid,
    output wire [31:0] m_axi_awaddr,
    output wire [7:0]  m_axi_awlen,
    output wire [2:0]  m_axi_awsize,
    output wire [1:0]  m_axi_awburst,
    output wire        m_axi_awvalid,
    input  wire        m_axi_awready,
    output wire [31:0] m_axi_wdata,
    output wire [3:0]  m_axi_wstrb,
    output wire        m_axi_wlast,
    output wire        m_axi_wvalid,
    input  wire        m_axi_wready,
    input  wire [0:0]  m_axi_bid,
    input  wire [1:0]  m_axi_bresp,
    input  wire        m_axi_bvalid,
    output wire        m_axi_bready
);

localparam CMDQ    = 4;                 // stream commands waiting to be cut into bursts
localparam STAGES  = EXT_LAT + 1;       // the read schedule's delay line
localparam RB_AW   = $clog2(RBUF);
localparam WB_AW   = $clog2(WBUF);

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    `CHECK_RANGE("EXT_LAT", EXT_LAT, `EXT_LAT_LO, `EXT_LAT_HI)
    // the ideal schedule streams one-word bursts a cycle: L + 2 of them are outstanding
    `CHECK_RANGE("READS_MAX", READS_MAX, EXT_LAT + 2, `AXI_READS_MAX)
    `CHECK_RANGE("RBUF", RBUF, 2, 256)
    `CHECK_RANGE("WBUF", WBUF, 2, 256)
    if ((RBUF & (RBUF - 1)) != 0 || (WBUF & (WBUF - 1)) != 0) begin
        $display("%m: RBUF = %0d and WBUF = %0d must be powers of two", RBUF, WBUF);
        $finish;
    end
    /* verilator coverage_on */
end

// ---------------------------------------------------------------------------------------------
// state. The read and write sides' state machines (the command queue, the stream being cut into
// bursts, AR or AW held until ready, the bursts outstanding) are two-process: an `always @*`
// block computes their next values and an `always @(posedge clk)` block loads them. The ideal
// schedule's delay line, the read and write buffers and the sticky error are a pipeline, FIFOs
// and a flag, each one clocked block (as Forencich writes his FIFOs). Every clocked block is
// enabled only in the cycles in which something it keeps can change: the port is idle most
// cycles, and on Icarus every signal a block reads costs (the enables are exact: every register
// ends each cycle as it would without)

// the ideal schedule
reg [16*STAGES-1:0] due_pipe_reg;      // stage s: the read stream commanded s+1 cycles ago
reg [31:0]          due_reg;           // words due and not yet delivered
reg [1:0]           fence_pipe_reg;
reg                 fence_reg;         // a fence is due
reg                 err_reg;           // the sticky bus error

// reads: command queue, AR, read buffer
reg [31:0]      rq_mem [0:CMDQ-1];                     // {addr, len}
reg [1:0]       rq_head_reg,  rq_head_next;
reg [1:0]       rq_tail_reg,  rq_tail_next;
reg [2:0]       rq_count_reg, rq_count_next;
reg [15:0]      ar_addr_reg,  ar_addr_next;            // the current stream's next word
reg [16:0]      ar_left_reg,  ar_left_next;            // .. its words not yet in a burst
reg             m_axi_arvalid_reg, m_axi_arvalid_next;
reg [31:0]      m_axi_araddr_reg,  m_axi_araddr_next;
reg [7:0]       m_axi_arlen_reg,   m_axi_arlen_next;
reg [8:0]       reads_out_reg, reads_out_next;         // AR issued, last R beat not received
reg [31:0]      rb_mem [0:RBUF-1];
reg [RB_AW-1:0] rb_head_reg;
reg [RB_AW-1:0] rb_tail_reg;
reg [RB_AW:0]   rb_count_reg;

// writes: command queue, AW, the bursts' lengths for W, write buffer, B
reg [31:0]      wq_mem [0:CMDQ-1];
reg [1:0]       wq_head_reg,  wq_head_next;
reg [1:0]       wq_tail_reg,  wq_tail_next;
reg [2:0]       wq_count_reg, wq_count_next;
reg [15:0]      aw_addr_reg,  aw_addr_next;
reg [16:0]      aw_left_reg,  aw_left_next;
reg             m_axi_awvalid_reg, m_axi_awvalid_next;
reg [31:0]      m_axi_awaddr_reg,  m_axi_awaddr_next;
reg [7:0]       m_axi_awlen_reg,   m_axi_awlen_next;
reg [7:0]       wl_mem [0:CMDQ-1];                     // awlen of each burst whose W beats have
                                                       // not all left
reg [1:0]       wl_head_reg,  wl_head_next;
reg [1:0]       wl_tail_reg,  wl_tail_next;
reg [2:0]       wl_count_reg, wl_count_next;
reg [7:0]       w_beat_reg,   w_beat_next;             // beats of the current W burst sent
reg [8:0]       writes_out_reg, writes_out_next;       // AW issued, B not received
reg [31:0]      wb_mem [0:WBUF-1];
reg [WB_AW-1:0] wb_head_reg;
reg [WB_AW-1:0] wb_tail_reg;
reg [WB_AW:0]   wb_count_reg;

// ---------------------------------------------------------------------------------------------
// the ideal schedule and the stall

wire due        = (due_reg != 32'd0);
wire rb_empty   = (rb_count_reg == {(RB_AW+1){1'b0}});
wire wb_full    = (wb_count_reg == WBUF[WB_AW:0]);
wire write_idle = (writes_out_reg == 9'd0) && (aw_left_reg == 17'd0) && (wq_count_reg == 3'd0);

assign stall = (due && rb_empty) || (fence_reg && !write_idle) || (wr_push && wb_full) ||
               (rd_cmd && (rq_count_reg == CMDQ[2:0])) || (wr_cmd && (wq_count_reg == CMDQ[2:0]));

wire advance  = !stall;
wire rd_take  = rd_cmd && advance;
wire wr_take  = wr_cmd && advance;
wire push     = wr_push && advance;
wire deliver  = due && !rb_empty && advance;

assign rd_valid   = deliver;
assign fence_done = fence_reg && write_idle && advance;
assign bus_err    = err_reg;

wire schedule_busy = rd_take || (due_pipe_reg != {(16*STAGES){1'b0}}) || due || fence ||
                     (fence_pipe_reg != 2'd0) || fence_reg;

always @(posedge clk) begin
    if (rst) begin
        due_pipe_reg   <= {(16*STAGES){1'b0}};
        due_reg        <= 32'd0;
        fence_pipe_reg <= 2'd0;
        fence_reg      <= 1'b0;
    end else if (advance && schedule_busy) begin
        due_pipe_reg   <= {due_pipe_reg[16*STAGES-17:0], rd_take ? rd_len : 16'd0};
        due_reg        <= due_reg - {31'd0, deliver} + {16'd0, due_pipe_reg[16*STAGES-1 -: 16]};
        fence_pipe_reg <= {fence_pipe_reg[0], fence};
        fence_reg      <= fence_pipe_reg[1] || (fence_reg && !write_idle);
    end
end

// ---------------------------------------------------------------------------------------------
// a burst of a stream: at most 256 words, not past the next 4 KB boundary (1024 words)

function [8:0] burst_len;
    input [9:0]  addr;    // the offset of the burst's first word in its 4 KB page
    input [16:0] left;
    reg   [10:0] to_boundary;
    begin
        to_boundary = 11'd1024 - {1'b0, addr};
        burst_len = 9'd256;
        if ({6'd0, to_boundary} < {8'd0, burst_len}) begin
            burst_len = to_boundary[8:0];
        end
        if (left < {8'd0, burst_len}) begin
            burst_len = left[8:0];
        end
    end
endfunction

// ---------------------------------------------------------------------------------------------
// reads: command queue, AR, read buffer

// a command's address and length, held at 0 between commands: the units' stream address
// changes in most cycles, and a burst is cut from it only with a command (on Icarus each change
// would run the burst arithmetic and the next-state block)
wire [15:0] rd_cmd_addr = {16{rd_cmd}} & rd_addr;
wire [15:0] rd_cmd_len  = {16{rd_cmd}} & rd_len;
wire        ar_cur      = (ar_left_reg != 17'd0);
wire        rq_any      = (rq_count_reg != 3'd0);
wire        ar_new      = !ar_cur && (rq_any || rd_take);    // a stream becomes the current one
wire [31:0] rq_first    = rq_mem[rq_head_reg];
wire [15:0] ar_src_addr = ar_cur ? ar_addr_reg : (rq_any ? rq_first[31:16] : rd_cmd_addr);
wire [16:0] ar_src_left = ar_cur ? ar_left_reg : {1'b0, rq_any ? rq_first[15:0] : rd_cmd_len};
wire [8:0]  ar_blen     = burst_len(ar_src_addr[9:0], ar_src_left);
wire        ar_slot     = !m_axi_arvalid_reg || m_axi_arready;
wire        ar_issue    = ar_slot && (ar_cur || ar_new) && (reads_out_reg < READS_MAX[8:0]);
wire        rq_push     = rd_take && (ar_cur || rq_any);
wire        rq_pop      = ar_new && rq_any;
wire        r_fire      = m_axi_rvalid && m_axi_rready;
wire        r_done      = r_fire && m_axi_rlast;
wire        rd_changes  = rq_push || ar_new || ar_issue || (m_axi_arvalid_reg && m_axi_arready) ||
                          r_done;    // a read-side register can change (rq_pop: with ar_new)

always @* begin
    rq_head_next       = rq_head_reg;
    rq_tail_next       = rq_tail_reg;
    rq_count_next      = rq_count_reg + {2'd0, rq_push} - {2'd0, rq_pop};
    ar_addr_next       = ar_addr_reg;
    ar_left_next       = ar_left_reg;
    m_axi_arvalid_next = m_axi_arvalid_reg;
    m_axi_araddr_next  = m_axi_araddr_reg;
    m_axi_arlen_next   = m_axi_arlen_reg;
    reads_out_next     = reads_out_reg + {8'd0, ar_issue} - {8'd0, r_done};

    if (rq_push) begin
        rq_tail_next = rq_tail_reg + 2'd1;
    end
    if (rq_pop) begin
        rq_head_next = rq_head_reg + 2'd1;
    end
    if (ar_issue) begin
        m_axi_arvalid_next = 1'b1;
        m_axi_araddr_next  = {14'd0, ar_src_addr, 2'b00};
        m_axi_arlen_next   = ar_blen[7:0] - 8'd1;
        ar_addr_next       = ar_src_addr + {7'd0, ar_blen};
        ar_left_next       = ar_src_left - {8'd0, ar_blen};
    end else begin
        if (m_axi_arready) begin
            m_axi_arvalid_next = 1'b0;
        end
        if (ar_new) begin
            ar_addr_next = ar_src_addr;
            ar_left_next = ar_src_left;
        end
    end
end

always @(posedge clk) begin
    if (rst) begin
        rq_head_reg       <= 2'd0;
        rq_tail_reg       <= 2'd0;
        rq_count_reg      <= 3'd0;
        ar_addr_reg       <= 16'd0;
        ar_left_reg       <= 17'd0;
        m_axi_arvalid_reg <= 1'b0;
        m_axi_araddr_reg  <= 32'd0;
        m_axi_arlen_reg   <= 8'd0;
        reads_out_reg     <= 9'd0;
    end else if (rd_changes) begin
        if (rq_push) begin
            rq_mem[rq_tail_reg] <= {rd_addr, rd_len};
        end
        rq_head_reg       <= rq_head_next;
        rq_tail_reg       <= rq_tail_next;
        rq_count_reg      <= rq_count_next;
        ar_addr_reg       <= ar_addr_next;
        ar_left_reg       <= ar_left_next;
        m_axi_arvalid_reg <= m_axi_arvalid_next;
        m_axi_araddr_reg  <= m_axi_araddr_next;
        m_axi_arlen_reg   <= m_axi_arlen_next;
        reads_out_reg     <= reads_out_next;
    end
end

assign m_axi_rready = (rb_count_reg != RBUF[RB_AW:0]);
assign rd_data      = rb_mem[rb_head_reg];

always @(posedge clk) begin
    if (rst) begin
        rb_head_reg  <= {RB_AW{1'b0}};
        rb_tail_reg  <= {RB_AW{1'b0}};
        rb_count_reg <= {(RB_AW+1){1'b0}};
    end else if (r_fire || deliver) begin
        if (r_fire) begin
            rb_mem[rb_tail_reg] <= m_axi_rresp[1] ? 32'd0 : m_axi_rdata;    // an error carries 0
            rb_tail_reg <= rb_tail_reg + 1'b1;
        end
        if (deliver) begin
            rb_head_reg <= rb_head_reg + 1'b1;
        end
        rb_count_reg <= rb_count_reg + {{RB_AW{1'b0}}, r_fire} - {{RB_AW{1'b0}}, deliver};
    end
end

// ---------------------------------------------------------------------------------------------
// writes: command queue, AW, the bursts' lengths for W, write buffer, B

wire [15:0] wr_cmd_addr = {16{wr_cmd}} & wr_addr;    // (as rd_cmd_addr and rd_cmd_len)
wire [15:0] wr_cmd_len  = {16{wr_cmd}} & wr_len;
wire        aw_cur      = (aw_left_reg != 17'd0);
wire        wq_any      = (wq_count_reg != 3'd0);
wire        aw_new      = !aw_cur && (wq_any || wr_take);
wire [31:0] wq_first    = wq_mem[wq_head_reg];
wire [15:0] aw_src_addr = aw_cur ? aw_addr_reg : (wq_any ? wq_first[31:16] : wr_cmd_addr);
wire [16:0] aw_src_left = aw_cur ? aw_left_reg : {1'b0, wq_any ? wq_first[15:0] : wr_cmd_len};
wire [8:0]  aw_blen     = burst_len(aw_src_addr[9:0], aw_src_left);
wire        aw_slot     = !m_axi_awvalid_reg || m_axi_awready;
wire        aw_issue    = aw_slot && (aw_cur || aw_new) && (wl_count_reg != CMDQ[2:0]) &&
                          (writes_out_reg != 9'h1FF);
wire        wq_push     = wr_take && (aw_cur || wq_any);
wire        wq_pop      = aw_new && wq_any;
wire        w_fire      = m_axi_wvalid && m_axi_wready;
wire        w_end       = w_fire && m_axi_wlast;
wire        b_fire      = m_axi_bvalid;    // bready is always 1
wire        wr_changes  = wq_push || aw_new || aw_issue || (m_axi_awvalid_reg && m_axi_awready) ||
                          w_fire || b_fire;    // a write-side register can change

always @* begin
    wq_head_next       = wq_head_reg;
    wq_tail_next       = wq_tail_reg;
    wq_count_next      = wq_count_reg + {2'd0, wq_push} - {2'd0, wq_pop};
    aw_addr_next       = aw_addr_reg;
    aw_left_next       = aw_left_reg;
    m_axi_awvalid_next = m_axi_awvalid_reg;
    m_axi_awaddr_next  = m_axi_awaddr_reg;
    m_axi_awlen_next   = m_axi_awlen_reg;
    wl_head_next       = wl_head_reg;
    wl_tail_next       = wl_tail_reg;
    wl_count_next      = wl_count_reg + {2'd0, aw_issue} - {2'd0, w_end};
    w_beat_next        = w_beat_reg;
    writes_out_next    = writes_out_reg + {8'd0, aw_issue} - {8'd0, b_fire};

    if (wq_push) begin
        wq_tail_next = wq_tail_reg + 2'd1;
    end
    if (wq_pop) begin
        wq_head_next = wq_head_reg + 2'd1;
    end
    if (aw_issue) begin
        m_axi_awvalid_next = 1'b1;
        m_axi_awaddr_next  = {14'd0, aw_src_addr, 2'b00};
        m_axi_awlen_next   = aw_blen[7:0] - 8'd1;
        aw_addr_next       = aw_src_addr + {7'd0, aw_blen};
        aw_left_next       = aw_src_left - {8'd0, aw_blen};
        wl_tail_next       = wl_tail_reg + 2'd1;
    end else begin
        if (m_axi_awready) begin
            m_axi_awvalid_next = 1'b0;
        end
        if (aw_new) begin
            aw_addr_next = aw_src_addr;
            aw_left_next = aw_src_left;
        end
    end
    if (w_end) begin
        wl_head_next = wl_head_reg + 2'd1;
    end
    if (w_fire) begin
        w_beat_next = m_axi_wlast ? 8'd0 : w_beat_reg + 8'd1;
    end
end

always @(posedge clk) begin
    if (rst) begin
        wq_head_reg       <= 2'd0;
        wq_tail_reg       <= 2'd0;
        wq_count_reg      <= 3'd0;
        aw_addr_reg       <= 16'd0;
        aw_left_reg       <= 17'd0;
        m_axi_awvalid_reg <= 1'b0;
        m_axi_awaddr_reg  <= 32'd0;
        m_axi_awlen_reg   <= 8'd0;
        wl_head_reg       <= 2'd0;
        wl_tail_reg       <= 2'd0;
        wl_count_reg      <= 3'd0;
        w_beat_reg        <= 8'd0;
        writes_out_reg    <= 9'd0;
    end else if (wr_changes) begin
        if (wq_push) begin
            wq_mem[wq_tail_reg] <= {wr_addr, wr_len};
        end
        if (aw_issue) begin
            wl_mem[wl_tail_reg] <= aw_blen[7:0] - 8'd1;
        end
        wq_head_reg       <= wq_head_next;
        wq_tail_reg       <= wq_tail_next;
        wq_count_reg      <= wq_count_next;
        aw_addr_reg       <= aw_addr_next;
        aw_left_reg       <= aw_left_next;
        m_axi_awvalid_reg <= m_axi_awvalid_next;
        m_axi_awaddr_reg  <= m_axi_awaddr_next;
        m_axi_awlen_reg   <= m_axi_awlen_next;
        wl_head_reg       <= wl_head_next;
        wl_tail_reg       <= wl_tail_next;
        wl_count_reg      <= wl_count_next;
        w_beat_reg        <= w_beat_next;
        writes_out_reg    <= writes_out_next;
    end
end

always @(posedge clk) begin
    if (rst) begin
        wb_head_reg  <= {WB_AW{1'b0}};
        wb_tail_reg  <= {WB_AW{1'b0}};
        wb_count_reg <= {(WB_AW+1){1'b0}};
    end else if (push || w_fire) begin
        if (push) begin
            wb_mem[wb_tail_reg] <= wr_data;
            wb_tail_reg <= wb_tail_reg + 1'b1;
        end
        if (w_fire) begin
            wb_head_reg <= wb_head_reg + 1'b1;
        end
        wb_count_reg <= wb_count_reg + {{WB_AW{1'b0}}, push} - {{WB_AW{1'b0}}, w_fire};
    end
end

// ---------------------------------------------------------------------------------------------
// the sticky bus error: an R beat or a B with SLVERR (2) or DECERR (3), cleared by a run's start

always @(posedge clk) begin
    if (rst || clear) begin
        err_reg <= 1'b0;
    end else if ((r_fire && m_axi_rresp[1]) || (b_fire && m_axi_bresp[1])) begin
        err_reg <= 1'b1;
    end
end

// ---------------------------------------------------------------------------------------------
// the AXI outputs

assign m_axi_arid    = 1'b0;
assign m_axi_araddr  = m_axi_araddr_reg;
assign m_axi_arlen   = m_axi_arlen_reg;
assign m_axi_arsize  = 3'd2;
assign m_axi_arburst = 2'b01;
assign m_axi_arvalid = m_axi_arvalid_reg;
assign m_axi_awid    = 1'b0;
assign m_axi_awaddr  = m_axi_awaddr_reg;
assign m_axi_awlen   = m_axi_awlen_reg;
assign m_axi_awsize  = 3'd2;
assign m_axi_awburst = 2'b01;
assign m_axi_awvalid = m_axi_awvalid_reg;
assign m_axi_wdata   = wb_mem[wb_head_reg];
assign m_axi_wstrb   = 4'hF;
assign m_axi_wlast   = (w_beat_reg == wl_mem[wl_head_reg]);
assign m_axi_wvalid  = (wb_count_reg != {(WB_AW+1){1'b0}}) && (wl_count_reg != 3'd0);
assign m_axi_bready  = 1'b1;

// one ID: responses come back in order and their IDs are not needed; an error beat's data is
// replaced by 0, not read
wire unused_mem_if = &{1'b0, m_axi_rid, m_axi_bid, m_axi_bresp[0], m_axi_rresp[0]};

`ifdef FORMAL    // the formal flow's invariants of this unit's registers (hw/formal)
`include "mem_if_invariants.vh"
`endif

endmodule

`default_nettype wire
